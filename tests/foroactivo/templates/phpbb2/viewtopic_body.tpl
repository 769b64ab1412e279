<!-- follows Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/subsilver/viewtopic_body.tpl (trimmed: no vote widget, attachments, quick reply or moderation) -->
<table width="100%" border="0" cellspacing="0" cellpadding="0">
	<tr><td align="center" class="t-title"><h1 class="cattitle">&nbsp;{TOPIC_TITLE}</h1></td></tr>
	<tr><td class="nav"><a class="nav" href="{U_INDEX}"><span>Índice</span></a> &raquo; <a class="nav" href="{U_VIEW_FORUM}"><span>{FORUM_NAME}</span></a></td></tr>
</table>
<table class="forumline" width="100%" border="0" cellspacing="1" cellpadding="3">
	<!-- BEGIN topicpagination -->
	<tr>
		<td class="row1 pagination" colspan="2" align="right" valign="top"><span class="gensmall">{PAGINATION}</span></td>
	</tr>
	<!-- END topicpagination -->
	<tr>
		<th class="thLeft" nowrap="nowrap" width="150">Autor</th>
		<th class="thRight" nowrap="nowrap" colspan="2">Mensaje</th>
	</tr>
	<!-- BEGIN postrow -->
	<!-- BEGIN displayed -->
	<tr class="post post--{postrow.displayed.U_POST_ID}" id="p{postrow.displayed.U_POST_ID}" style="">
		<td class="{postrow.displayed.ROW_CLASS}" valign="top" width="150">
			<span class="name"><a name="{postrow.displayed.U_POST_ID}" style="position: relative; top: -30px; width: 1px;" id="{postrow.displayed.U_POST_ID}"></a><strong>{postrow.displayed.POSTER_NAME}</strong></span><br />
			<span class="postdetails poster-profile">
				{postrow.displayed.POSTER_RANK}<br />
				{postrow.displayed.POSTER_AVATAR}<br /><br />
				<!-- BEGIN profile_field -->
				{postrow.displayed.profile_field.LABEL} {postrow.displayed.profile_field.CONTENT}{postrow.displayed.profile_field.SEPARATOR}
				<!-- END profile_field -->
				{postrow.displayed.POSTER_RPG}
			</span><br />
			<img src="https://illiweb.com/fa/empty.gif" alt="" style="width:150px;height:1px" />
		</td>
		<td class="{postrow.displayed.ROW_CLASS}" valign="top" width="100%" height="28">
			<table width="100%" border="0" cellspacing="0" cellpadding="0">
				<tr>
					<td><span class="postdetails"><img src="https://illiweb.com/fa/subsilver/icon_minipost.gif" alt="Mensaje" title="Mensaje" border="0" />Tema: {postrow.displayed.POST_SUBJECT}&nbsp; &nbsp;<img src="https://illiweb.com/fa/subsilver/icon_time.gif" alt="" border="0" />{postrow.displayed.POST_DATE}</span></td>
					<td valign="top" nowrap="nowrap" class="post-options">{postrow.displayed.QUOTE_IMG}</td>
				</tr>
				<tr><td colspan="2" class="hr"><hr /></td></tr>
				<tr>
					<td colspan="2">
						<div class="postbody">
							<div>{postrow.displayed.MESSAGE}</div>
							<div class="clear"></div>
							<!-- BEGIN switch_signature -->
							<div class="signature_div">
								{postrow.displayed.SIGNATURE}
							</div>
							<!-- END switch_signature -->
						</div>
						<span class="gensmall">{postrow.displayed.EDITED_MESSAGE}</span>
					</td>
				</tr>
			</table>
		</td>
	</tr>
	<tr class="post--{postrow.displayed.U_POST_ID}" style="">
		<td class="{postrow.displayed.ROW_CLASS} browse-arrows" width="150" align="left" valign="middle"><a href="#top">Volver arriba</a>&nbsp;<a href="#bottom">Ir abajo</a></td>
		<td class="{postrow.displayed.ROW_CLASS} messaging gensmall" width="100%" height="28">{postrow.displayed.PROFILE_IMG}</td>
	</tr>
	<tr><td class="spaceRow" colspan="2" height="1"><img src="https://illiweb.com/fa/empty.gif" alt="" width="1" height="1" /></td></tr>
	<!-- END displayed -->
	<!-- END postrow -->
	<!-- BEGIN topicpagination -->
	<tr>
		<td class="row2" valign="top" width="150"><span class="gensmall">{PAGE_NUMBER}</span></td>
		<td class="row1" align="right" valign="top"><span class="gensmall">{PAGINATION}</span></td>
	</tr>
	<!-- END topicpagination -->
</table>
<!-- BEGIN switch_user_logged_in --><a href="{U_POST_REPLY_TOPIC}" rel="nofollow"><img src="https://illiweb.com/fa/subsilver/reply-locked.gif" alt="Responder al tema" /></a><!-- END switch_user_logged_in -->
